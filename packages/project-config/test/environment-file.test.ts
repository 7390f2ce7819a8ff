import { describe, expect, it } from "vitest";
import { parseEnvironmentFile } from "../src/environment-file.ts";

const parse = (text: string) => parseEnvironmentFile(new TextEncoder().encode(text));

describe(".overseer/environment.yml", () => {
  it("reads the image, the setup commands (a string through sh -c, a list as argv) and the agent CLI", () => {
    const result = parse(
      [
        "image: 127.0.0.1:5000/overseer-test/python:1",
        "setup:",
        "  - echo ready > .setup-done && test -f .setup-done",
        "  - [python3, -m, compileall, -q, src]",
        "setup_timeout_seconds: 120",
        "agent:",
        '  npm: "@openai/codex@0.171.0"',
        "",
      ].join("\n"),
    );
    expect(result).toEqual({
      ok: true,
      value: {
        image: "127.0.0.1:5000/overseer-test/python:1",
        setup: [
          ["/bin/sh", "-c", "echo ready > .setup-done && test -f .setup-done"],
          ["python3", "-m", "compileall", "-q", "src"],
        ],
        setupTimeoutSeconds: 120,
        agentPackage: "@openai/codex@0.171.0",
      },
    });
  });

  it("takes an empty file as no image, no setup and no agent CLI", () => {
    expect(parse("# nothing yet\n")).toEqual({ ok: true, value: { setup: [], setupTimeoutSeconds: 600 } });
  });

  it("names the file, the line and column and what to write for a bad value", () => {
    const result = parse(
      ["image: python:3.12", "setup:", "  - make", "  - 42", "agent:", "  npm: codex"].join("\n"),
    );
    expect(result.ok).toBe(false);
    const lines = result.ok ? [] : result.message.split("\n");
    expect(lines[0]).toMatch(/^\.overseer\/environment\.yml:4:5: setup\.1: expected a command: a string/);
    expect(lines[1]).toMatch(
      /^\.overseer\/environment\.yml:6:8: agent\.npm: expected an npm package at an exact version such as "@openai\/codex@0\.171\.0", received "codex"/,
    );
  });

  it("names an unknown key and lists the known ones", () => {
    const result = parse("image: python:3.12\nimgae: python:3.11\n");
    expect(result.ok ? "" : result.message).toMatch(
      /^\.overseer\/environment\.yml:1:1: unknown key "imgae" \(the keys are image, setup, setup_timeout_seconds, agent\.npm\)$/,
    );
  });

  it("refuses an image reference that is not one, naming the line", () => {
    const result = parse("setup: []\nimage: 'Python 3; rm -rf /'\n");
    expect(result.ok ? "" : result.message).toMatch(
      /^\.overseer\/environment\.yml:2:8: image: expected an image reference/,
    );
  });

  it("points at a YAML syntax error and at duplicate keys", () => {
    const broken = parse("image: python:3.12\nsetup:\n  - [make\n");
    expect(broken.ok ? "" : broken.message).toMatch(
      /^\.overseer\/environment\.yml:\d+:\d+: .*fix the YAML syntax$/m,
    );
    const twice = parse("image: a:1\nimage: b:2\n");
    expect(twice.ok ? "" : twice.message).toMatch(
      /^\.overseer\/environment\.yml:2:1: .*unique.*fix the YAML syntax$/i,
    );
  });

  it("refuses a file that is not UTF-8, too large, or a top-level list", () => {
    expect(parseEnvironmentFile(Uint8Array.from([0x69, 0x6d, 0xff]))).toMatchObject({
      ok: false,
      message: ".overseer/environment.yml: not valid UTF-8; save it as UTF-8 text",
    });
    const huge = parse(`setup:\n${"  - echo hi\n".repeat(7000)}`);
    expect(huge.ok ? "" : huge.message).toMatch(/bytes, over the 65536 bytes allowed/);
    const list = parse("- image: a:1\n");
    expect(list.ok ? "" : list.message).toMatch(/^\.overseer\/environment\.yml:1:1: expected object/);
  });
});
