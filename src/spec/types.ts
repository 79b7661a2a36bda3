/**
 * Resource types, derived from openapi.yaml by openapi-typescript (`npm run generate:types`,
 * checked up to date by test/spec/types.test.ts) so code and spec cannot drift.
 */
import type { components, operations } from './openapi-types.js';

type Schemas = components['schemas'];

export type Product = Schemas['Product'];
export type ProductCreate = Schemas['ProductCreate'];
export type ProductPatch = Schemas['ProductPatch'];
export type ProductList = Schemas['ProductList'];
export type Offer = Schemas['Offer'];
export type OfferCreate = Schemas['OfferCreate'];
export type OfferList = Schemas['OfferList'];
export type BillingCycle = Schemas['BillingCycle'];
export type Account = Schemas['Account'];
export type AccountCreate = Schemas['AccountCreate'];
export type Permission = Schemas['Permission'];
export type WebhookDeliveryMode = Schemas['WebhookDeliveryMode'];
export type Health = Schemas['Health'];
export type ResetResult = Schemas['ResetResult'];
export type OperationId = keyof operations;
export type Clock = Schemas['Clock'];
export type PurchaseRequest = Schemas['PurchaseRequest'];
export type Transaction = Schemas['Transaction'];
export type TransactionStatus = Schemas['TransactionStatus'];
export type AutopilotRules = Schemas['AutopilotRules'];
export type AutopilotRule = Schemas['AutopilotRule'];
export type AutopilotState = Schemas['AutopilotState'];
export type BoletoAddress = Schemas['BoletoAddress'];
export type MxnTransaction = Schemas['MxnTransaction'];
export type Withdrawal = Schemas['Withdrawal'];
export type WithdrawalStatus = Schemas['WithdrawalStatus'];
export type WithdrawalLookup = Schemas['WithdrawalLookup'];
export type CashOutRequest = Schemas['CashOutRequest'];
export type PixType = Schemas['PixType'];
export type Balance = Schemas['Balance'];
export type LimitsUpdate = Schemas['LimitsUpdate'];
