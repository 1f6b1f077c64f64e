// The one way the types are made from the document: `npm run generate` writes its output to
// src/schema.ts, and the drift test (test/clients/typescript-client.test.ts) compares the two.
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

/** TypeScript types (paths, components, operations) of an OpenAPI document given as an object. */
export async function render(doc) {
  // A copy: openapi-typescript annotates the object it is given.
  const ast = await openapiTS(structuredClone(doc), { alphabetize: false, exportType: false })
  return COMMENT_HEADER + astToString(ast)
}
