// The words of the Subscribers page's export and erase controls, shared with
// the help article's accuracy test (features/help/help-accuracy.test.ts), so
// the article names exactly what the page shows.

export const SUBSCRIBER_PRIVACY_TEXTS = {
  exportButton: 'Export CSV',
  exportDescription: 'Downloads the subscribers that match your search and status as a CSV file.',
  includeKeys: 'Include push keys for migration',
  keysWarning:
    'The file will hold each browser’s push subscription. Anyone who has it and your site’s VAPID private key can send notifications to these browsers: keep it as safe as a password, and delete it once the move is done.',
  exportFailed: 'Failed to export subscribers',
  downloadData: 'Download data',
  downloadFailed: 'Failed to download the subscriber’s data',
  erase: 'Erase completely',
  eraseConfirm:
    'Erase this subscriber completely? Their subscription, tags, events and delivery history are deleted and cannot be restored. Your statistics keep their totals.',
  erased: 'Subscriber erased',
  eraseFailed: 'Failed to erase subscriber',
} as const;
