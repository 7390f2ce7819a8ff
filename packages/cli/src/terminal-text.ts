/**
 * The one sanitizer of everything the CLI prints. Server strings (stages, objectives, reasons,
 * titles, run output) are untrusted: an ESC or CSI sequence could clear the screen, rewrite
 * earlier lines, set the window title or hide text. Every C0 control except newline and tab
 * (the structure of multi-line output), DEL, every C1 control (U+0080–U+009F, including the
 * 8-bit CSI U+009B) and the bidirectional overrides and isolates are shown as a visible `\xHH`
 * / `\u{HHHH}` escape instead, so the text stays readable and nothing reaches the terminal as a
 * command.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it neutralises
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * The colour codes a styled line may keep: SGR reset, bold, dim and the six foreground colours
 * (what @overseer/transcript's renderer writes). They change how text looks, never where it goes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ESC of the kept sequences
const KEPT_SGR = /(\u001b\[(?:0|1|2|3[1-6])m)/;

/** terminalSafe for a line the CLI coloured: its colour codes kept, every other control escaped. */
export function terminalStyledSafe(text: string): string {
  return text
    .split(KEPT_SGR)
    .map((part, i) => (i % 2 === 1 ? part : terminalSafe(part)))
    .join("");
}
