// A module.register resolve hook (it runs on the loader thread): appends each URL the process
// resolves to the file named in its data, synchronously, so the list is whole when the process ends.
import { appendFileSync } from "node:fs";

let file = "";

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
