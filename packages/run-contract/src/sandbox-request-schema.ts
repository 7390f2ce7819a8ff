import { z } from "zod";
import { imageReferenceSchema } from "./image-reference.ts";

/** Every sandbox driver, defined once (settings, runner configs and run jobs validate against it). */
export const SANDBOX_DRIVER_NAMES = ["bwrap", "gvisor", "none"] as const;
export type SandboxDriverName = (typeof SANDBOX_DRIVER_NAMES)[number];

/**
 * What a run job asks of the worker's sandbox: the project's driver (absent: the worker's own),
 * its limits and the hosts its egress proxy may reach (rules of `egress-host-rule.ts`). The
 * worker turns it into the sandbox spec its driver enforces.
 */
export const runSandboxSchema = z.object({
  driver: z.enum(SANDBOX_DRIVER_NAMES).optional(),
  pidsMax: z.number().int().positive(),
  memoryMb: z.number().int().positive(),
  cpuSeconds: z.number().int().positive(),
  /** Disk the run may add to its checkout (MiB); the worker's own limit applies when lower. */
  diskMb: z.number().int().positive().optional(),
  networkAllowHosts: z.array(z.string()),
  /** The project's run image (`sandbox.image`): the worker runs the sandbox on its unpacked rootfs. */
  image: imageReferenceSchema.optional(),
});
export type RunSandbox = z.infer<typeof runSandboxSchema>;
