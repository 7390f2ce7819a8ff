export { ConfigError, formatConfigIssue } from "./config-error.ts";
export { type ConfigIssue, formatIssueLine } from "./config-issue.ts";
export { createRedactor, MIN_REDACTABLE_SECRET_LENGTH, REDACTED } from "./redactor.ts";
export {
  type DescribeOptions,
  describeReceived,
  expectedErrorMap,
  type FormatZodIssuesOptions,
  formatIssuePath,
  formatZodIssues,
  suggestKey,
  type ToConfigIssuesOptions,
  valueAtPath,
  zodIssuesToConfigIssues,
} from "./zod-issue-formatter.ts";
