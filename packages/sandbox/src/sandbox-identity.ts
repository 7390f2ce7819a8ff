/**
 * Synthetic /etc/passwd and /etc/group for a sandbox: the agent's uid resolves to a name and a
 * home (tools such as ssh, git and python's getpass need that), and none of the host's accounts
 * are listed.
 */

/** Account name of the sandbox user. */
export const SANDBOX_USER = "agent";

export function buildPasswd(uid: number, gid: number, home: string): string {
  const lines = [
    `root:x:0:0:root:/root:/usr/sbin/nologin`,
    `${SANDBOX_USER}:x:${uid}:${gid}:Overseer agent:${home}:/bin/sh`,
  ];
  if (uid !== 65534) lines.push("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin");
  return `${lines.join("\n")}\n`;
}

export function buildGroup(gid: number): string {
  const lines = ["root:x:0:", `${SANDBOX_USER}:x:${gid}:`];
  if (gid !== 65534) lines.push("nogroup:x:65534:");
  return `${lines.join("\n")}\n`;
}
