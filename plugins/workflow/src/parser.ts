import { readFile } from 'node:fs/promises';
import { NotFoundError } from '@runner/plugin-sdk';
import { parseDuration } from './duration.js';
import { selectGroup, topologicalOrder } from './graph.js';
import { loopItemsFromText } from './loop-items.js';
import { applyOverrides, parseVarArguments } from './overrides.js';
import { parseValues, parseWorkflow, validateWorkflow } from './parse.js';
import { conditionHolds } from './template-syntax.js';
import type { WorkflowParser } from './service.js';

/** Reads a file, turning a missing one into a NotFoundError that names it. */
async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(`${what} not found: ${path}`, { cause: error });
    }
    throw error;
  }
}

/** The WorkflowParser service. This module loads `yaml`, so import it only when it is needed. */
export function createWorkflowParser(): WorkflowParser {
  return {
    parse: parseWorkflow,
    async parseFile(path, options = {}) {
      const text = await readText(path, 'workflow file');
      return parseWorkflow(text, { ...options, file: options.file ?? path });
    },
    validate: validateWorkflow,
    parseValues,
    parseVarArguments,
    applyOverrides,
    selectGroup,
    topologicalOrder,
    parseDuration,
    loopItemsFromText,
    conditionHolds,
  };
}
