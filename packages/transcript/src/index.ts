/**
 * Run transcripts (docs/transcripts.md): the entry schema, one parser per agent CLI's output and
 * a terminal renderer. Pure: no I/O, no Node built-ins (the web app bundles it).
 */
export * from "./transcript-defaults.ts";
export * from "./transcript-entry.ts";
export * from "./transcript-parser.ts";
export * from "./transcript-renderer.ts";
export * from "./transcript-summary.ts";
