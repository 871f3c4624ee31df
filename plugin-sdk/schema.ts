// TypeBox, re-exported so plugins declare route and config schemas against the SDK alone (an
// external plugin has no TypeBox of its own). A subpath, so commands that declare no schema do
// not load it.
export { Type, type Static, type TSchema, type TObject } from '@sinclair/typebox';
