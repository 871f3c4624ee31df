import type { LuaModuleImplementation } from '@runner/plugin-sdk';
import { checkAll } from './assertions.js';
import type { infraTestModule } from './spec.js';

export function createInfraTestModule(): LuaModuleImplementation<keyof typeof infraTestModule.functions> {
  return {
    async verify(call, list) {
      const { passed, total, failures } = await checkAll(call, list);
      if (failures.length > 0)
        throw new Error(`infra_test: ${total - passed} of ${total} assertions failed:\n  - ${failures.join('\n  - ')}`);
      return { passed };
    },
    async check(call, list) {
      const { passed, failures } = await checkAll(call, list);
      return { ok: failures.length === 0, passed, failures };
    },
  };
}
