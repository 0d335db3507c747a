/** Spec §2 Help Center: the topic categories, in this order. */
export const HELP_CATEGORY_IDS = [
  'getting-started',
  'dashboard',
  'notifications',
  'campaigns',
  'subscribers',
  'segments',
  'rss-feeds',
  'settings',
  'troubleshooting',
  'best-practices',
] as const;
export type HelpCategoryId = (typeof HELP_CATEGORY_IDS)[number];

export interface HelpArticle {
  /** Stable id, used in the address (/help?article=…). */
  id: string;
  category: HelpCategoryId;
  title: string;
  /** One sentence shown in lists. */
  summary: string;
  /**
   * The text, in the help renderer's small markup (components/article-content.tsx):
   * "## " heading, "- " bullet, "1. " step, "✓ " / "✗ " lines, ``` code blocks,
   * **bold** and `code` inline, blank lines between paragraphs.
   */
  content: string;
}
