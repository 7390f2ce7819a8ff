/**
 * Atlassian Document Format (ADF, what Jira Cloud's REST v3 carries for descriptions and
 * comments) to markdown-ish text and back: headings, paragraphs, hard breaks, bullet and ordered
 * lists, task lists (`- [ ]` / `- [x]`, so an issue's checklist becomes acceptance), code blocks,
 * mentions, links and cards. Anything else keeps its text.
 */

export interface AdfNode {
  readonly type: string;
  readonly text?: string;
  readonly attrs?: Record<string, unknown>;
  readonly content?: readonly AdfNode[];
  readonly marks?: readonly { type: string; attrs?: Record<string, unknown> }[];
}

export interface AdfDocument extends AdfNode {
  readonly type: "doc";
  readonly version: 1;
  readonly content: readonly AdfNode[];
}

function inline(nodes: readonly AdfNode[] | undefined): string {
  return (nodes ?? [])
    .map((node) => {
      if (node.type === "text") {
        const link = node.marks?.find((m) => m.type === "link")?.attrs?.href;
        const code = node.marks?.some((m) => m.type === "code");
        const text = code ? `\`${node.text ?? ""}\`` : (node.text ?? "");
        return typeof link === "string" ? `[${text}](${link})` : text;
      }
      if (node.type === "hardBreak") return "\n";
      if (node.type === "mention") return String(node.attrs?.text ?? "@someone");
      if (node.type === "inlineCard") return String(node.attrs?.url ?? "");
      if (node.type === "emoji") return String(node.attrs?.text ?? node.attrs?.shortName ?? "");
      return inline(node.content);
    })
    .join("");
}

function block(node: AdfNode, indent: string): string {
  switch (node.type) {
    case "paragraph":
      return indent + inline(node.content);
    case "heading":
      return `${"#".repeat(Number(node.attrs?.level ?? 1))} ${inline(node.content)}`;
    case "codeBlock":
      return `\`\`\`${String(node.attrs?.language ?? "")}\n${inline(node.content)}\n\`\`\``;
    case "rule":
      return "---";
    case "bulletList":
    case "orderedList":
      return (node.content ?? [])
        .map((item, i) => {
          const bullet = node.type === "orderedList" ? `${i + 1}. ` : "- ";
          const [first, ...rest] = (item.content ?? []).map((c) => block(c, `${indent}  `).trimStart());
          return [`${indent}${bullet}${first ?? ""}`, ...rest.map((r) => `${indent}  ${r}`)].join("\n");
        })
        .join("\n");
    case "taskList":
      return (node.content ?? [])
        .map((item) => `${indent}- [${item.attrs?.state === "DONE" ? "x" : " "}] ${inline(item.content)}`)
        .join("\n");
    case "blockquote":
      return (node.content ?? []).map((c) => `> ${block(c, "")}`).join("\n");
    default:
      return node.content ? (node.content ?? []).map((c) => block(c, indent)).join("\n") : inline([node]);
  }
}

/** ADF to text (markdown where ADF has a markdown form); a plain string passes through. */
export function adfToText(document: unknown): string {
  if (document === null || document === undefined) return "";
  if (typeof document === "string") return document;
  const content = (document as AdfNode).content ?? [];
  return content
    .map((node) => block(node, ""))
    .join("\n\n")
    .trim();
}

/** Text to ADF: a paragraph per blank-line-separated block, hard breaks for single newlines. */
export function textToAdf(text: string): AdfDocument {
  const paragraphs = text
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  return {
    type: "doc",
    version: 1,
    content: paragraphs.map((paragraph) => ({
      type: "paragraph",
      content: paragraph
        .split("\n")
        .flatMap((line, i): AdfNode[] =>
          i === 0 ? [{ type: "text", text: line }] : [{ type: "hardBreak" }, { type: "text", text: line }],
        ),
    })),
  };
}
