/** Default bound on a task title, in characters (OVERSEER_MAX_TITLE_CHARS at the gateway). */
export const DEFAULT_MAX_TITLE_CHARS = 500;
