/** The three verdicts, mildest first. */
export type Verdict = 'allow' | 'review' | 'block'
