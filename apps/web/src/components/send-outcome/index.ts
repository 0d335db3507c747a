export { OutcomeBar } from './outcome-bar';
export { OutcomeSummary } from './outcome-summary';
export { formatCount, nextStep, PUSH_SERVICE_LABELS, REASON_LABELS, shareText, STATUS_BADGES, statusBadgeOf } from './outcome-words';
