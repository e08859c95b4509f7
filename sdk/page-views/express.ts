import type { NextFunction, Request, Response } from 'express';
import type { PageViewReporter } from './reporter.js';

/**
 * Express middleware that reports the pages the app serves to hub: `app.use(pageViewsExpress(reporter))`,
 * before the routes (and before static file serving, whose HTML pages are pages too). The path
 * is the one the visitor asked for (`originalUrl`), not what a router left of it.
 */
export function pageViewsExpress(reporter: PageViewReporter) {
  return function reportPageViews(req: Request, res: Response, next: NextFunction): void {
    reporter.track(req, res, req.originalUrl);
    next();
  };
}
