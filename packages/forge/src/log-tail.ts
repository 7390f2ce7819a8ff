/** The last `maxBytes` of `text`, cut at a line start when one is near. */
export function tail(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  const cut = bytes.subarray(bytes.length - maxBytes).toString("utf8");
  const newline = cut.indexOf("\n");
  return newline !== -1 && newline < 200 ? cut.slice(newline + 1) : cut;
}
