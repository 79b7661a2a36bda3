import { pageEndpoints, type PageServices } from '../pages/handlers.js';
import type { OperationId } from '../spec/types.js';
import { autopilotEndpoints, type AutopilotServices } from './autopilot-handlers.js';
import { bindEndpoints, optionsOf, type Endpoint, type EndpointOptions, type Endpoints } from './endpoint.js';
import { faultEndpoints, type FaultServices } from './fault-handlers.js';
import { catalogEndpoints, type CatalogServices } from './handlers.js';
import { inspectorEndpoints, type InspectorServices } from './inspector-handlers.js';
import { rateLimitEndpoints, type RateLimitServices } from './rate-limit-handlers.js';
import { transactionEndpoints, type TransactionServices } from './transaction-handlers.js';
import { usageEndpoints, type UsageServices } from './usage-handlers.js';
import { webhookEndpoints, type WebhookServices } from './webhook-handlers.js';
import { withdrawalEndpoints, type WithdrawalServices } from './withdrawal-handlers.js';

/** What every family's handlers are given: the composition root builds it once. */
export type EndpointServices = CatalogServices &
  TransactionServices &
  WithdrawalServices &
  PageServices &
  WebhookServices &
  AutopilotServices &
  FaultServices &
  InspectorServices &
  UsageServices &
  RateLimitServices;

/**
 * Every operation of openapi.yaml with its endpoint. `satisfies` over the generated operation
 * types refuses an operation without one, and a name that is no operation; a new endpoint goes
 * into its family's table and is here with nothing more.
 */
export const ENDPOINTS = {
  ...catalogEndpoints,
  ...transactionEndpoints,
  ...withdrawalEndpoints,
  ...pageEndpoints,
  ...webhookEndpoints,
  ...autopilotEndpoints,
  ...faultEndpoints,
  ...inspectorEndpoints,
  ...usageEndpoints,
  ...rateLimitEndpoints,
} satisfies { readonly [K in OperationId]: Endpoint<K, EndpointServices> };

/** Every endpoint with its handler given the services. */
export const createEndpoints = (services: EndpointServices): Endpoints => bindEndpoints(ENDPOINTS, services);

/** Each operation's options, without its handler: what the endpoint table test lists. */
export const endpointOptions = (): { [K in OperationId]?: EndpointOptions } => optionsOf<EndpointServices>(ENDPOINTS);
