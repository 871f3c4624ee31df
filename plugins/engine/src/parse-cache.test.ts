import { describe, expect, it } from 'vitest';
import type { ParsedWorkflow } from '@runner/plugin-sdk';
import { ParseCache } from './parse-cache.js';

const parsedOf = (name: string): ParsedWorkflow =>
  ({ workflow: { name, vars: {}, tasks: [{ name: 't', dependsOn: [] }] }, warnings: [] }) as unknown as ParsedWorkflow;

describe('ParseCache', () => {
  it('parses a text once per file name, again once the text changes', () => {
    const cache = new ParseCache();
    let parses = 0;
    const parse = () => (parses++, parsedOf('a'));
    const first = cache.get('tasks: []', 'a.yaml', parse);
    expect(cache.get('tasks: []', 'a.yaml', parse)).toBe(first);
    expect(parses).toBe(1);
    // The same text under another name reports its problems there: parsed on its own.
    cache.get('tasks: []', 'b.yaml', parse);
    cache.get('tasks: [] # edited', 'a.yaml', parse);
    expect(parses).toBe(3);
  });

  it('keeps nothing of a text that failed to parse', () => {
    const cache = new ParseCache();
    const bad = () => {
      throw new Error('a.yaml:1:1: bad');
    };
    expect(() => cache.get('x', 'a.yaml', bad)).toThrow('bad');
    expect(cache.size).toBe(0);
    expect(cache.get('x', 'a.yaml', () => parsedOf('a')).workflow.tasks[0]!.name).toBe('t');
  });

  it('freezes what it shares between runs', () => {
    const parsed = new ParseCache().get('t', 'a.yaml', () => parsedOf('a'));
    expect(() => {
      (parsed.workflow.tasks[0] as { name: string }).name = 'changed';
    }).toThrow(TypeError);
  });

  it('forgets the least recently used text past its limit', () => {
    const cache = new ParseCache(2);
    let parses = 0;
    const parse = () => (parses++, parsedOf('x'));
    cache.get('1', 'f', parse);
    cache.get('2', 'f', parse);
    cache.get('1', 'f', parse); // 1 used last: 2 goes next
    cache.get('3', 'f', parse);
    expect(cache.size).toBe(2);
    cache.get('1', 'f', parse);
    expect(parses).toBe(3);
    cache.get('2', 'f', parse);
    expect(parses).toBe(4);
  });
});
