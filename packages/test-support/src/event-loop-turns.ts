/**
 * Runs `operation` while a `setImmediate` chain counts the event loop's turns, and returns its
 * value with that count. A long walk that yields between slices lets the loop turn more than
 * once; one that holds the loop for all its work lets the chain run at most once.
 */
export async function countEventLoopTurns<T>(
  operation: () => Promise<T>,
): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const value = await operation();
    return { value, turns };
  } finally {
    ticking = false;
  }
}
