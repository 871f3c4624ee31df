import { createSubscriber } from 'svelte/reactivity';

/**
 * The time every relative time and running duration is shown against: one timer for the whole tab,
 * ticking once a second only while something on the page reads it.
 */
const subscribe = createSubscriber((update) => {
  const timer = setInterval(update, 1000);
  return () => clearInterval(timer);
});

export const clock = {
  get now(): number {
    subscribe();
    return Date.now();
  },
};
