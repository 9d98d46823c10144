import type { Request } from "./http";

/** Options accepted by the cache. */
export interface CacheOptions {
  ttl: number;
  onEvict?(key: string): void;
}

export type Key = string | number;

export enum Level {
  Debug,
  Info,
}

// Keeps values for a while.
export abstract class Cache<V> {
  protected store = new Map<Key, V>();

  abstract load(key: Key): Promise<V>;

  get(key: Key): V | undefined;
  get(key: Key, fallback: V): V;
  get(key: Key, fallback?: V): V | undefined {
    return this.store.get(key) ?? fallback;
  }

  @logged
  clear(): void {
    this.store.clear();
  }

  private static readonly label = "cache";
}

export namespace Util.Strings {
  export function trim(s: string): string {
    return s.trim();
  }

  export const upper = (s: string): string => s.toUpperCase();
}

declare module "express" {
  interface Request {
    user?: string;
  }
}

export function parse(input: string): Key;
export function parse(input: number): Key;
export function parse(input: string | number): Key {
  return input;
}

const greeting = (name: string) => `Grüße, ${name}`;

function logged(target: object, key: string): void {}
