export { PROCESS_DEFAULTS } from "./process-defaults.ts";
export { isProcessAlive, isProcessGroupAlive } from "./process-liveness.ts";
export { removeTree } from "./remove-tree.ts";
