/** Default and largest page size of each paged listing; a request outside [1, max] is clamped. */
export interface PageBounds {
  readonly default: number;
  readonly max: number;
}

/** Every listing's paging defaults, in one place; `resolvePageLimit` applies them. */
export const PAGE_LIMITS = Object.freeze({
  runs: Object.freeze({ default: 100, max: 500 }),
  events: Object.freeze({ default: 200, max: 1000 }),
  tasks: Object.freeze({ default: 500, max: 1000 }),
} satisfies Record<string, PageBounds>);

/** The page size to query: the listing's default when none was asked for, else clamped to [1, max]. */
export function resolvePageLimit(requested: number | undefined, bounds: PageBounds): number {
  return Math.min(Math.max(requested ?? bounds.default, 1), bounds.max);
}
