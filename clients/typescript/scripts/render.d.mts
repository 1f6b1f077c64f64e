/** TypeScript types (paths, components, operations) of an OpenAPI document given as an object. */
export function render(doc: object): Promise<string>
