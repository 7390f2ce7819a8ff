import { z } from "zod";

/**
 * A run image reference, one grammar for the runner config, the run job and the worker's image
 * cache: `[registry[:port]/]repository[:tag][@sha256:<64 hex>]`, as docker and skopeo write it
 * (`python:3.12`, `ghcr.io/org/ci:2026-01`, `127.0.0.1:5000/py@sha256:…`). A digest pins the
 * image; a tag is resolved to its digest when a run starts.
 */
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const REGISTRY = "(?:[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*(?::[0-9]{1,5})?/)?";
const TAG = "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?";
const DIGEST = "(?:@sha256:[a-f0-9]{64})?";
const IMAGE_REFERENCE = new RegExp(`^${REGISTRY}${COMPONENT}(?:/${COMPONENT})*${TAG}${DIGEST}$`);

export const imageReferenceSchema = z
  .string()
  .max(512)
  .regex(IMAGE_REFERENCE, {
    error: (issue) =>
      `an image reference such as "python:3.12", "registry.example.com/team/ci:1" or "name@sha256:<64 hex digits>", received ${JSON.stringify(issue.input)}`,
  });

export interface ImageReference {
  /** The repository with its registry (`127.0.0.1:5000/py`, `python`). */
  name: string;
  tag: string | null;
  /** `sha256:<hex>` when the reference pins one. */
  digest: string | null;
}

/** Splits a valid reference (see `imageReferenceSchema`) into repository, tag and digest. */
export function parseImageReference(reference: string): ImageReference {
  const at = reference.indexOf("@");
  const digest = at === -1 ? null : reference.slice(at + 1);
  const rest = at === -1 ? reference : reference.slice(0, at);
  const colon = rest.lastIndexOf(":");
  const hasTag = colon > rest.lastIndexOf("/");
  return {
    name: hasTag ? rest.slice(0, colon) : rest,
    tag: hasTag ? rest.slice(colon + 1) : null,
    digest,
  };
}
