/**
 * What Converge reads of the registry's answers, as schemas the HTTP layer checks each answer
 * against (see `../http/shape.ts`). Only the fields the client and the AclRole kind read are
 * required or typed; everything else may come and go. Lists the real registry leaves out or sends
 * as null for "none" are nullable.
 */
import { Type } from '@sinclair/typebox';
import { lazySchema, nullable } from '../http/shape.js';

const StringList = lazySchema(() => nullable(Type.Array(Type.String())));

const PolicyLinkShape = lazySchema(() =>
  Type.Object({
    ID: Type.Optional(Type.String()),
    Name: Type.Optional(Type.String()),
  }),
);

const ServiceIdentityShape = lazySchema(() =>
  Type.Object({
    ServiceName: Type.String(),
    Datacenters: Type.Optional(StringList()),
  }),
);

const NodeIdentityShape = lazySchema(() =>
  Type.Object({
    NodeName: Type.String(),
    Datacenter: Type.String(),
  }),
);

/** A role: its ID and Name identify it, the lists are mapped and sorted, ModifyIndex is its version. */
export const RoleShape = lazySchema(() =>
  Type.Object({
    ID: Type.String(),
    Name: Type.String(),
    Description: Type.Optional(Type.String()),
    Policies: Type.Optional(nullable(Type.Array(PolicyLinkShape()))),
    ServiceIdentities: Type.Optional(nullable(Type.Array(ServiceIdentityShape()))),
    NodeIdentities: Type.Optional(nullable(Type.Array(NodeIdentityShape()))),
    Hash: Type.Optional(Type.String()),
    CreateIndex: Type.Optional(Type.Integer()),
    ModifyIndex: Type.Optional(Type.Integer()),
    Namespace: Type.Optional(Type.String()),
  }),
);

/** `GET /v1/acl/roles`: an array, or null when there are none. */
export const RoleListShape = lazySchema(() => nullable(Type.Array(RoleShape())));

/** A policy: links are checked against its ID and Name. */
export const PolicyShape = lazySchema(() =>
  Type.Object({
    ID: Type.String(),
    Name: Type.String(),
    Description: Type.Optional(Type.String()),
    Rules: Type.Optional(Type.String()),
    Datacenters: Type.Optional(StringList()),
    CreateIndex: Type.Optional(Type.Integer()),
    ModifyIndex: Type.Optional(Type.Integer()),
  }),
);

export const PolicyListShape = lazySchema(() => nullable(Type.Array(PolicyShape())));

/** `DELETE /v1/acl/role/:id`: `true` or `false`. */
export const DeleteResultShape = lazySchema(() => Type.Boolean());
