import { type HarvestedUsage, type ModelPrice, UsageMeter } from "./usage-meter.ts";

export { costOf, type HarvestedUsage, type ModelPrice, UsageMeter } from "./usage-meter.ts";

/**
 * Usage of one run from its whole output and the CLI's session files (`files`: their text), by
 * the reader of `agent` (usage-readers.ts; null/unknown: every reader is tried, first match
 * wins), priced by `price` (usage-meter.ts). A worker counts as the output streams instead
 * ({@link UsageMeter}); this reads a finished output at once (`doctor --deep`'s probe call).
 */
export function harvestUsage(
  output: string,
  agent: string | null | undefined,
  price?: ModelPrice | null,
  files: readonly string[] = [],
): HarvestedUsage | null {
  const meter = new UsageMeter(agent);
  meter.write(output);
  meter.end();
  meter.readFiles(files);
  return meter.usage(price);
}
