// The GitHub-flavoured markdown rules for turndown (tables, strikethrough, task lists) ship without types.
declare module '@joplin/turndown-plugin-gfm' {
  import type TurndownService from 'turndown';

  export const gfm: TurndownService.Plugin;
}
