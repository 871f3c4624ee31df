import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from './suggest.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['kitten', 'sitting', 3],
    ['scirpt', 'script', 1],
    ['dependson', 'depends_on', 1],
  ])('%j to %j is %d', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});

describe('closest', () => {
  const keys = ['name', 'exec', 'depends_on', 'when', 'retry', 'timeout', 'delegate_to', 'delegation'];
  it.each([
    ['dependson', 'depends_on'],
    ['dependsOn', 'depends_on'],
    ['Depends-On', 'depends_on'],
    ['tmeout', 'timeout'],
    ['retries', 'retry'],
    ['whn', 'when'],
    ['nmae', 'name'],
    ['delegate', 'delegate_to'],
  ])('suggests %j for %j', (word, expected) => {
    expect(closest(word, keys)).toBe(expected);
  });

  it.each(['vars', 'command', 'x', 'shell'])('suggests nothing for %j', (word) => {
    expect(closest(word, keys)).toBeUndefined();
  });

  it('prefers the nearest candidate and never the word itself', () => {
    expect(closest('tsk', ['task', 'tasks'])).toBe('task');
    expect(closest('name', ['name'])).toBeUndefined();
  });

  it('formats the hint', () => {
    expect(didYouMean('tmeout', keys)).toBe(' (did you mean "timeout"?)');
    expect(didYouMean('zzz', keys)).toBe('');
  });
});
