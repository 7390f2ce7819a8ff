import type { Db, ProjectRow } from "@overseer/db";
import type { Command } from "@overseer/domain";
import type { ForgeAdapter, ForgeCallCounter } from "@overseer/forge";
import type { ForgeQueue } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import type { ProjectPolicy } from "../project-policy.ts";

/** What a forge job works with: one adapter (and its call counter) for one project. */
export interface ForgeJobContext {
  readonly db: Db;
  readonly project: ProjectRow;
  readonly policy: ProjectPolicy;
  readonly forge: ForgeAdapter;
  readonly calls: ForgeCallCounter;
  readonly queue: ForgeQueue;
  readonly logger: Logger;
  readonly dashboardUrl: string | null;
  /** The account the token acts as: its reviews and comments are Overseer's own. */
  login(): Promise<string>;
  apply(command: Command): Promise<void>;
  /** Adds the job's forge calls to the task's count (and the ETags to send next time). */
  record(
    taskId: string,
    etags?: { pull?: string | null; checks?: string | null; reviews?: string | null },
  ): Promise<void>;
}
