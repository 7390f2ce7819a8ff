declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;
  export default SwaggerUIBundle;
}
declare module "*.css";
