export { createExplainer, WARNING_PREFIX } from './explainer.js'
export { KNOWN_REASON_CODES } from './reasons.js'
export type {
  ExplainCheck,
  Explainer,
  ExplainerOptions,
  ExplainerStatus,
  Explanation,
  ExplanationInput,
  ProviderName,
} from './types.js'
