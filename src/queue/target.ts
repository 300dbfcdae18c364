/** Where a queue lives: what the worker, the chunk enqueue and the admin helpers connect to. */
import type { ConnectionOptions } from 'bullmq';

export interface QueueTarget {
  /** The Redis holding the queue: `redis://…` or `rediss://…`. */
  url: string;
  /** The queue's name: one queue per CRM account (`defaultQueueName(crm)`). */
  name: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
}

/** BullMQ's connection and prefix options for `target`. */
export function bullOptions(target: QueueTarget): { connection: ConnectionOptions; prefix?: string } {
  return { connection: { url: target.url }, ...(target.prefix ? { prefix: target.prefix } : {}) };
}
