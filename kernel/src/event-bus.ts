// The bus lives in the SDK so that the test kernel delivers exactly as the real one does.
export { EventHub as KernelEventBus } from '@runner/plugin-sdk';
