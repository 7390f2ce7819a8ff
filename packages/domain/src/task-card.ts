/** One card of a task file (validated by `@overseer/task-files`) as the domain imports it. */
export interface TaskCardInput {
  readonly id: string;
  readonly stage: string;
  readonly title: string;
  readonly body: string;
  readonly role: string;
  readonly scope: readonly string[];
  readonly prerequisites: readonly string[];
  readonly acceptance: readonly string[];
  /** Higher runs first. */
  readonly priority: number;
}
