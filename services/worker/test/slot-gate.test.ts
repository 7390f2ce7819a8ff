import { describe, expect, it } from "vitest";
import { SlotGate } from "../src/slot-gate.ts";

describe("SlotGate", () => {
  it("lets at most its size be taken, and frees a slot on release", () => {
    const gate = new SlotGate(2);
    expect([gate.tryTake(), gate.tryTake(), gate.tryTake()]).toEqual([true, true, false]);
    expect(gate.inUse).toBe(2);
    gate.release();
    expect(gate.inUse).toBe(1);
    expect(gate.tryTake()).toBe(true);
  });

  it("holds a wait for a free slot until one is released, and ends every wait on close", async () => {
    const gate = new SlotGate(1);
    await gate.whenFree();
    gate.tryTake();
    let freed = false;
    const waiting = gate.whenFree().then(() => {
      freed = true;
    });
    await Promise.resolve();
    expect(freed).toBe(false);
    gate.release();
    await waiting;
    expect(freed).toBe(true);

    gate.tryTake();
    const closed = gate.whenFree();
    gate.close();
    await closed;
    // A closed gate never holds a wait, full or not.
    await gate.whenFree();
    expect(gate.inUse).toBe(1);
  });

  it("refuses a release that was never taken and a budget below one", () => {
    expect(() => new SlotGate(1).release()).toThrow(/never taken/);
    expect(() => new SlotGate(0)).toThrow(/at least 1, received 0/);
  });
});
