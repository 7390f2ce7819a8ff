import type { Redis } from "./redis-connection.ts";

/**
 * SUBSCRIBEs `connection` to `channels` once its handshake is over; resolves when Redis
 * confirmed the subscription. Use it for every subscription instead of `connection.subscribe`.
 *
 * ioredis 5 (from 5.8.2, redis/ioredis#2037) writes a SUBSCRIBE at once while a connection is in
 * its handshake (status `connect`: the CLIENT SETINFO round trip before the ready check). Redis's
 * reply turns the connection into subscriber mode, so the ready check's INFO that follows is
 * refused, and ioredis drops the connection and makes a new one, which subscribes again only
 * once it is ready. The SUBSCRIBE had resolved meanwhile: a message published in that gap (a
 * run's cancel, a transcript entry) was lost, and nothing but an 'error' event said so. Sent
 * in any other state the command is written (ready) or queued until after the ready check.
 */
export async function subscribeWhenReady(connection: Redis, ...channels: string[]): Promise<void> {
  await outOfHandshake(connection);
  await connection.subscribe(...channels);
}

/** PSUBSCRIBE, once the handshake is over (see `subscribeWhenReady`). */
export async function psubscribeWhenReady(connection: Redis, ...patterns: string[]): Promise<void> {
  await outOfHandshake(connection);
  await connection.psubscribe(...patterns);
}

/**
 * Resolves once the connection is not in its handshake; the caller's command follows in the
 * same turn of the event loop, before any socket event could start another handshake.
 */
async function outOfHandshake(connection: Redis): Promise<void> {
  while (connection.status === "connect") await handshakeOver(connection);
}

/** The handshake ended: ready, or the connection closed (it then reconnects, or has ended). */
function handshakeOver(connection: Redis): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      connection.off("ready", done);
      connection.off("close", done);
      resolve();
    };
    connection.on("ready", done);
    connection.on("close", done);
  });
}
