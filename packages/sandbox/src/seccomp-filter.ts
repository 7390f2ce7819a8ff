/**
 * A small classic-BPF seccomp program for bwrap's `--seccomp FD`, assembled here so no libseccomp
 * is needed. It is deliberately narrow; everything not listed is allowed.
 *
 * Why each rule:
 * - setuid/setgid bits (chmod family, open/creat/mknod with O_CREAT): the sandbox user maps to HOST
 *   uid 0, so a file it marks setuid in the checkout is a setuid-root binary on the host. The bind
 *   mounts are nosuid inside the sandbox, but not for host users who reach the checkout later.
 * - ioctl TIOCSTI / TIOCLINUX: pushing keystrokes into a terminal. `--new-session` already detaches
 *   the controlling terminal; this is the second layer.
 * - io_uring: its requests (e.g. OPENAT) bypass seccomp argument checks entirely → ENOSYS, so
 *   programs fall back to plain syscalls.
 * - openat2: its mode lives in a struct seccomp cannot read → ENOSYS (libc falls back to openat).
 * - syslog(2): reading the host kernel log (dmesg) → EPERM.
 * - any other syscall ABI (x32, i386 on x86_64): the numbers above would not match → EPERM.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

const SETID_BITS = 0o6000;
const O_CREAT = 0o100;
const O_TMPFILE_BIT = 0o20000000;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const X32_SYSCALL_BIT = 0x40000000;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of syscall argument `index` (little-endian hosts only: x86_64, aarch64). */
const argLow = (index: number) => 16 + 8 * index;

type Rule =
  | { kind: "mode"; nr: number; modeArg: number }
  | { kind: "open"; nr: number; flagsArg: number; modeArg: number }
  | { kind: "ioctl"; nr: number }
  | { kind: "enosys"; nr: number }
  | { kind: "eperm"; nr: number };

interface ArchTable {
  auditArch: number;
  x32Guard: boolean;
  rules: Rule[];
}

const ARCH_TABLES: Record<string, ArchTable> = {
  x64: {
    auditArch: 0xc000003e,
    x32Guard: true,
    rules: [
      { kind: "mode", nr: 90, modeArg: 1 }, // chmod
      { kind: "mode", nr: 91, modeArg: 1 }, // fchmod
      { kind: "mode", nr: 268, modeArg: 2 }, // fchmodat
      { kind: "mode", nr: 452, modeArg: 2 }, // fchmodat2
      { kind: "mode", nr: 85, modeArg: 1 }, // creat
      { kind: "mode", nr: 133, modeArg: 1 }, // mknod
      { kind: "mode", nr: 259, modeArg: 2 }, // mknodat
      { kind: "open", nr: 2, flagsArg: 1, modeArg: 2 }, // open
      { kind: "open", nr: 257, flagsArg: 2, modeArg: 3 }, // openat
      { kind: "ioctl", nr: 16 },
      { kind: "enosys", nr: 437 }, // openat2
      { kind: "enosys", nr: 425 }, // io_uring_setup
      { kind: "enosys", nr: 426 }, // io_uring_enter
      { kind: "enosys", nr: 427 }, // io_uring_register
      { kind: "eperm", nr: 103 }, // syslog
    ],
  },
  arm64: {
    auditArch: 0xc00000b7,
    x32Guard: false,
    rules: [
      { kind: "mode", nr: 52, modeArg: 1 }, // fchmod
      { kind: "mode", nr: 53, modeArg: 2 }, // fchmodat
      { kind: "mode", nr: 452, modeArg: 2 }, // fchmodat2
      { kind: "mode", nr: 33, modeArg: 2 }, // mknodat
      { kind: "open", nr: 56, flagsArg: 2, modeArg: 3 }, // openat
      { kind: "ioctl", nr: 29 },
      { kind: "enosys", nr: 437 }, // openat2
      { kind: "enosys", nr: 425 }, // io_uring_setup
      { kind: "enosys", nr: 426 }, // io_uring_enter
      { kind: "enosys", nr: 427 }, // io_uring_register
      { kind: "eperm", nr: 116 }, // syslog
    ],
  },
};

type Target = number | string;
interface Insn {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
}

/** Tiny assembler: instructions with symbolic jump targets (labels), resolved to relative offsets. */
class Program {
  private readonly insns: Insn[] = [];
  private readonly labels = new Map<string, number>();

  label(name: string): void {
    this.labels.set(name, this.insns.length);
  }
  load(offset: number): void {
    this.insns.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
  }
  jump(code: number, k: number, jt: Target, jf: Target): void {
    this.insns.push({ code, jt, jf, k });
  }
  ret(value: number): void {
    this.insns.push({ code: BPF_RET_K, jt: 0, jf: 0, k: value });
  }

  assemble(): Buffer {
    const out = Buffer.alloc(this.insns.length * 8);
    this.insns.forEach((insn, index) => {
      const resolve = (target: Target): number => {
        if (typeof target === "number") return target;
        const at = this.labels.get(target);
        if (at === undefined) throw new Error(`seccomp assembler: unknown label ${target}`);
        const offset = at - (index + 1);
        if (offset < 0 || offset > 255) throw new Error(`seccomp assembler: jump to ${target} out of range`);
        return offset;
      };
      out.writeUInt16LE(insn.code, index * 8);
      out.writeUInt8(resolve(insn.jt), index * 8 + 2);
      out.writeUInt8(resolve(insn.jf), index * 8 + 3);
      out.writeUInt32LE(insn.k >>> 0, index * 8 + 4);
    });
    return out;
  }
}

/** Whether this package has a seccomp table for the host CPU architecture. */
export function seccompSupported(arch: string = process.arch): boolean {
  return arch in ARCH_TABLES;
}

/** Builds the BPF program bytes for `arch` (Node's `process.arch` naming), or null if unsupported. */
export function buildSeccompFilter(arch: string = process.arch): Buffer | null {
  const table = ARCH_TABLES[arch];
  if (table === undefined) return null;
  const p = new Program();
  p.load(OFFSET_ARCH);
  p.jump(BPF_JEQ_K, table.auditArch, 0, "eperm");
  p.load(OFFSET_NR);
  if (table.x32Guard) p.jump(BPF_JGE_K, X32_SYSCALL_BIT, "eperm", 0);
  table.rules.forEach((rule, index) => {
    const target = rule.kind === "enosys" || rule.kind === "eperm" ? rule.kind : `rule${index}`;
    p.jump(BPF_JEQ_K, rule.nr, target, 0);
  });
  p.ret(SECCOMP_RET_ALLOW);
  // Classic BPF only jumps forward: argument checks sit after the dispatch, the verdicts last.
  table.rules.forEach((rule, index) => {
    if (rule.kind === "enosys" || rule.kind === "eperm") return;
    p.label(`rule${index}`);
    if (rule.kind === "mode") {
      p.load(argLow(rule.modeArg));
      p.jump(BPF_JSET_K, SETID_BITS, "eperm", "allow");
    } else if (rule.kind === "open") {
      p.load(argLow(rule.flagsArg));
      p.jump(BPF_JSET_K, O_CREAT | O_TMPFILE_BIT, 0, "allow");
      p.load(argLow(rule.modeArg));
      p.jump(BPF_JSET_K, SETID_BITS, "eperm", "allow");
    } else {
      p.load(argLow(1));
      p.jump(BPF_JEQ_K, TIOCSTI, "eperm", 0);
      p.jump(BPF_JEQ_K, TIOCLINUX, "eperm", "allow");
    }
  });
  p.label("allow");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("eperm");
  p.ret(SECCOMP_RET_ERRNO | EPERM);
  p.label("enosys");
  p.ret(SECCOMP_RET_ERRNO | ENOSYS);
  return p.assemble();
}
