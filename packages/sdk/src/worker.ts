/**
 * Herald's service worker, served as /sdk/herald-sw.js. A site's root file
 * /herald-sw.js holds only `importScripts("https://HERALD/sdk/herald-sw.js")`;
 * a site with its own worker adds that line to it instead.
 */
import { installHeraldWorker } from './worker/handlers';

installHeraldWorker(self as unknown as ServiceWorkerGlobalScope);
