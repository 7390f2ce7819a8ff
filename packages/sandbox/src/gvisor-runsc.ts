import { execa } from "execa";
import { canAccess, findOnPath } from "./path-access.ts";

/**
 * Facts about the host's gVisor (`runsc`): where it is, its version, the platform it can use, and
 * whether a trivial container starts at all — with the reason and the fix when it does not (not
 * installed; not root and no user namespaces; inside a container without the capabilities runsc
 * needs). Read by the gVisor driver, `doctor` and the worker's probe.
 */

export const RUNSC_INSTALL_FIX =
  "install gVisor: `apt-get install runsc` (Debian/Ubuntu), or a current release from https://gvisor.dev/docs/user_guide/install/";

export async function findRunsc(explicit?: string): Promise<string | null> {
  if (explicit !== undefined) return (await canAccess(explicit)) ? explicit : null;
  if (await canAccess("/usr/bin/runsc")) return "/usr/bin/runsc";
  return findOnPath("runsc");
}

/** `runsc version 0.0~20221219.0` (first line of `runsc --version`), or null. */
export async function runscVersion(runsc: string): Promise<string | null> {
  try {
    const { stdout } = await execa(runsc, ["--version"], { timeout: 5_000, extendEnv: false, env: {} });
    return stdout.split("\n")[0]?.trim() || null;
  } catch {
    return null;
  }
}

/**
 * The platform runsc runs processes on: `systrap` where this runsc has it (gVisor's default since
 * 2023: no /dev/kvm and faster than ptrace), else `ptrace`. KVM is never chosen by itself: under
 * nested virtualisation it can hang instead of failing (seen on this project's CI host); name it
 * explicitly (driver option `platform`) on bare metal.
 */
export async function detectRunscPlatform(runsc: string): Promise<string> {
  try {
    const { stdout, stderr } = await execa(runsc, ["help"], {
      timeout: 5_000,
      extendEnv: false,
      env: {},
      reject: false,
    });
    return /systrap/.test(`${stdout}\n${stderr}`) ? "systrap" : "ptrace";
  } catch {
    return "ptrace";
  }
}

/** Whether runsc must run in rootless mode (the worker is not root). */
export function runscRootless(): boolean {
  return process.getuid?.() !== 0;
}

/** The likely cause and fix of a runsc failure, from its message and where the worker runs. */
export function runscFailureFix(message: string, rootless: boolean): string {
  if (/operation not permitted|permission denied|EPERM/i.test(message)) {
    return rootless
      ? "runsc --rootless needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1); or run the worker as root"
      : "in a container runsc needs CAP_SYS_ADMIN, CAP_SYS_CHROOT, CAP_SETUID/SETGID and a seccomp profile that allows unshare/mount (docker: --cap-add SYS_ADMIN --security-opt seccomp=unconfined), or give up gVisor there and use bwrap";
  }
  if (/timed out/i.test(message))
    return "runsc did not finish a trivial container in time: the platform may not work here (pass the driver option platform=ptrace)";
  return "see runsc's message above; `runsc --network=none --ignore-cgroups do /bin/true` reproduces it";
}
