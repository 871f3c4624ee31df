// A single-page app: nothing is rendered on a server or prerendered.
export const ssr = false;
export const prerender = false;
