import { useState } from "preact/hooks";

/**
 * Redelivering dead letters from a page: `redeliver(id)` sends one again with `send`, says
 * what came of it in `notice` ("<noun> <id> is pending again; <again>", or why nothing
 * changed, or the error) and then reloads the list with `reload`.
 */
export function useRedeliver({
  noun,
  again,
  send,
  reload,
}: {
  noun: string;
  again: string;
  send: (id: string) => Promise<{ redelivered: boolean; status: string }>;
  reload: () => void;
}): { notice: string | null; redeliver: (id: string) => Promise<void> } {
  const [notice, setNotice] = useState<string | null>(null);
  const redeliver = async (id: string) => {
    try {
      const r = await send(id);
      setNotice(
        r.redelivered
          ? `${noun} ${id} is pending again; ${again}`
          : `${noun} ${id} is ${r.status}, not a dead letter; nothing changed.`,
      );
    } catch (error) {
      setNotice(`${noun} ${id} was not redelivered: ${(error as Error).message}`);
    }
    reload();
  };
  return { notice, redeliver };
}
