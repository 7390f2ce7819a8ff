/**
 * Role names: `ci-cd`, `security`, `reviewer`… A task file names one per task and the runner
 * config keys its roles by them; they end up in agent ids and branch names.
 */
export const ROLE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
