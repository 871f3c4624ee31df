// Scrolls a page top to bottom over 3 s, one step per animation frame, and resolves with the
// frame deltas in ms (the first dropped: it measures nothing): what "drops frames" is judged on.
/* global performance, requestAnimationFrame, scrollTo, innerHeight, document */
export function scrollFrames(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        scrollTo(0, 0);
        const deltas = [];
        const start = performance.now();
        let last = start;
        const height = document.documentElement.scrollHeight - innerHeight;
        const step = (now) => {
          deltas.push(now - last);
          last = now;
          const t = Math.min(1, (now - start) / 3000);
          scrollTo(0, height * t);
          if (t < 1) requestAnimationFrame(step);
          else resolve(deltas.slice(1));
        };
        requestAnimationFrame(step);
      }),
  );
}
