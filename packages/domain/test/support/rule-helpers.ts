/** Helpers of the rule tests (test/rules/): expected refusals, id lists, scripted agent ids. */
import { expect } from "vitest";
import { DomainError } from "../../src/index.ts";

/** Runs `fn` and expects it to throw a DomainError with `code`; returns the error. */
export function expectDomainError(fn: () => unknown, code: DomainError["code"]): DomainError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(code);
    return error as DomainError;
  }
  throw new Error(`expected a DomainError with code ${code}, nothing was thrown`);
}

export const ids = (tasks: readonly { id: string }[]) => tasks.map((t) => t.id);

/** A randomHex that hands out `values` in order, then fresh counter values. */
export function scripted(values: readonly string[]): () => string {
  let i = 0;
  return () => values[i++] ?? (0x1000 + i).toString(16).padStart(12, "0");
}
