/** The registry's ACL objects as its API sends them (spec part A; field names are the service's own). */
import type { BlockingParameters } from '../http/blocking-query.js';

/** A role's link to a policy: by ID, by Name, or both (responses carry both). */
export interface PolicyLink {
  ID?: string;
  Name?: string;
}

export interface ServiceIdentity {
  ServiceName: string;
  /** Empty or absent: valid in every datacenter, future ones included. */
  Datacenters?: string[];
}

export interface NodeIdentity {
  NodeName: string;
  Datacenter: string;
}

export interface Role {
  ID: string;
  Name: string;
  Description?: string;
  Policies?: PolicyLink[];
  ServiceIdentities?: ServiceIdentity[];
  NodeIdentities?: NodeIdentity[];
  /** Base64 of the server's hash over the role's content. */
  Hash?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
  /** Enterprise only. */
  Namespace?: string;
}

/** What create and update send: a role without server-assigned fields (an `ID` on update must match the path). */
export type RoleInput = Omit<Role, 'ID'> & { ID?: string };

export interface Policy {
  ID: string;
  Name: string;
  Description?: string;
  /** Present on single-policy reads; lists leave it out. */
  Rules?: string;
  Datacenters?: string[];
  Hash?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
  Namespace?: string;
}

export interface NamespaceOption {
  /** Sent as query `ns`. `'*'` lists every namespace where the endpoint allows it. */
  namespace?: string;
  signal?: AbortSignal;
}

/** Blocking-query parameters for reads (see `BlockingParameters`), in a namespace. */
export interface BlockingOptions extends NamespaceOption, BlockingParameters {}

/** A read together with the `X-Registry-Index` it was answered at, for the next blocking query. */
export type { Indexed } from '../http/blocking-query.js';
