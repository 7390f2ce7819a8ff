export { isProcessAlive, isProcessGroupAlive } from "./process-liveness.ts";
