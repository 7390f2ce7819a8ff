/**
 * Most tasks one task file may hold unless configured otherwise (`OVERSEER_MAX_IMPORT_TASKS`):
 * the one bound of API and CLI imports and of a mission planner's plan alike.
 */
export const DEFAULT_MAX_IMPORT_TASKS = 10_000;
