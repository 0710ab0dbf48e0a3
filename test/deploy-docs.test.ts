/**
 * The files docs/deploying.md and docs/oauth.md give whole are found by their markers, and the
 * tests' replacement of their placeholders (test/helpers/doc-files.ts) changes only those: a port
 * put in for one placeholder is never read as another.
 */
import { describe, expect, it } from "vitest";
import { documentedFile, placed } from "./helpers/doc-files.js";

describe("documented files", () => {
  it.for([
    ["docs/deploying.md", "haproxy-key.cfg"],
    ["docs/oauth.md", "haproxy-oauth.cfg"],
  ] as const)(
    "%s gives %s whole: HTTP mode, forwardfor, the check on every server, stickiness",
    ([doc, name]) => {
      const text = documentedFile(doc, name);
      expect(text.startsWith("global\n")).toBe(true);
      for (const line of [
        /^defaults$/m,
        /^ {2}mode http\b/m,
        /^ {2}option forwardfor\b/m,
        /^ {2}timeout (connect|client|server) /m,
        /^ {2}bind :443 ssl crt \//m,
        /^ {2}option httpchk$/m,
        /^ {2}http-check send meth GET uri \/healthz$/m,
        /^ {2}stick on req\.hdr\(mcp-session-id\)$/m,
        /^ {2}stick store-response res\.hdr\(mcp-session-id\)$/m,
      ]) {
        expect(text).toMatch(line);
      }
      expect(text.match(/^ {2}server r\d 10\.0\.0\.1\d:3333 check$/gm)).toHaveLength(3);
    },
  );

  it("refuses a marker that is missing", () => {
    expect(() => documentedFile("docs/deploying.md", "nginx.conf")).toThrow(/no block marked/);
  });

  it("replaces placeholders in one pass, and fails on one the text no longer holds", () => {
    const text = "bind :443\nserver r1 10.0.0.11:3333\n";
    expect(
      placed(text, [
        ["10.0.0.11:3333", "127.0.0.1:44307"],
        [":443", "127.0.0.1:40001"],
      ]),
    ).toBe("bind 127.0.0.1:40001\nserver r1 127.0.0.1:44307\n");
    expect(() => placed(text, [[":8404", "x"]])).toThrow(/no longer holds :8404/);
  });
});
