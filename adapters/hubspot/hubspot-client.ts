/** The few @hubspot/api-client calls the adapter makes, and the shapes they answer: a real `Client` satisfies it. */
import type { HubSpotErrorBody, readableResponses } from './hubspot-errors.js';
import type { CreateInput, UpsertInput } from './hubspot-requests.js';

/** The SDK's per-call options (the adapter passes `readableResponses`). */
export type CallOptions = typeof readableResponses;

/** The few @hubspot/api-client calls this adapter makes (a real `Client` satisfies it). */
export interface HubSpotClientLike {
  /**
   * A raw request (`Client.apiRequest`): used for the v4 association batch create, whose SDK method
   * throws on any 2xx but 201 and 207 (HubSpot's v3 association create answers 200). Resolves with
   * any status; only a network failure rejects.
   */
  apiRequest(options: { method: string; path: string; body?: unknown }): Promise<RawResponse>;
  crm: {
    objects: {
      batchApi: {
        upsert(objectType: string, body: { inputs: Traced<UpsertInput>[] }, options?: CallOptions): Promise<BatchResult>;
        create(objectType: string, body: { inputs: Traced<CreateInput>[] }, options?: CallOptions): Promise<BatchResult>;
        /** `POST …/batch/update`: by `idProperty` when the input names one; never creates (onMissing 'skip'). */
        update(objectType: string, body: { inputs: Traced<UpsertInput>[] }, options?: CallOptions): Promise<BatchResult>;
        read(objectType: string, body: { idProperty?: string; inputs: { id: string }[]; properties: string[]; propertiesWithHistory: string[] }, archived?: boolean, options?: CallOptions): Promise<BatchResult>;
      };
    };
    associations: {
      v4: {
        batchApi: {
          getPage(fromObjectType: string, toObjectType: string, body: { inputs: { id: string; after?: string }[] }, options?: CallOptions): Promise<AssociationPage>;
        };
      };
    };
  };
}

/** An input with its index in the request, which HubSpot echoes on its result or error. */
export type Traced<T> = T & { objectWriteTraceId: string };
export interface ResultObject { id: string; _new?: boolean; properties?: Record<string, string | null>; objectWriteTraceId?: string }
export interface BatchResult { results?: ResultObject[]; errors?: HubSpotErrorBody[] }
export interface AssociationPage {
  results?: { _from?: { id: string }; to?: { toObjectId: string | number }[]; paging?: { next?: { after?: string } } }[];
  errors?: HubSpotErrorBody[];
}

/** The part of a fetch Response that `apiRequest` answers with and the adapter reads. */
export interface RawResponse {
  status: number;
  headers: { forEach(callback: (value: string, name: string) => void): void };
  text(): Promise<string>;
}
