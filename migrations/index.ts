import { CreateLedgerEvents1795293483763 } from './1795293483763-CreateLedgerEvents.js';
import { CreateNamespaceHeads1795365243712 } from './1795365243712-CreateNamespaceHeads.js';
import { CreateReservations1795365243713 } from './1795365243713-CreateReservations.js';
import { CreateAdmissionDecisions1795365243714 } from './1795365243714-CreateAdmissionDecisions.js';
import { CreateProjections1795500000000 } from './1795500000000-CreateProjections.js';
import { DropLedgerEventsNotifyTrigger1795900000000 } from './1795900000000-DropLedgerEventsNotifyTrigger.js';
import { AddOnBehalfOf1795900000100 } from './1795900000100-AddOnBehalfOf.js';
import { AddRequestDigest1795900000200 } from './1795900000200-AddRequestDigest.js';
import { TrimWritePathIndexes1795900000300 } from './1795900000300-TrimWritePathIndexes.js';
import { HeadsFillfactor1795900000350 } from './1795900000350-HeadsFillfactor.js';
import { SlimProjections1795900000500 } from './1795900000500-SlimProjections.js';
import { SharedQuotaHeads1795900000600 } from './1795900000600-SharedQuotaHeads.js';
import { SharedQuotaAppliedIndex1795900000700 } from './1795900000700-SharedQuotaAppliedIndex.js';
import { ProjectedTerminations1795900000800 } from './1795900000800-ProjectedTerminations.js';
import { UsageVersions1795900000900 } from './1795900000900-UsageVersions.js';
import { PartitionLedgerEvents1795900001000 } from './1795900001000-PartitionLedgerEvents.js';
import { HorizonDefinitions1795900001100 } from './1795900001100-HorizonDefinitions.js';
import { SharedQuotaWithdrawnIndex1795900001200 } from './1795900001200-SharedQuotaWithdrawnIndex.js';
import { QueuedHeadsIndex1795900001300 } from './1795900001300-QueuedHeadsIndex.js';
import { SharedUsageSeries1795900001400 } from './1795900001400-SharedUsageSeries.js';
import { SecurePartitionFunctions1795900001700 } from './1795900001700-SecurePartitionFunctions.js';

/** Every migration, in order, as classes (no globs: bundlers and ESM both see them). */
export const MIGRATIONS = [
  CreateLedgerEvents1795293483763,
  CreateNamespaceHeads1795365243712,
  CreateReservations1795365243713,
  CreateAdmissionDecisions1795365243714,
  CreateProjections1795500000000,
  DropLedgerEventsNotifyTrigger1795900000000,
  AddOnBehalfOf1795900000100,
  AddRequestDigest1795900000200,
  TrimWritePathIndexes1795900000300,
  HeadsFillfactor1795900000350,
  SlimProjections1795900000500,
  SharedQuotaHeads1795900000600,
  SharedQuotaAppliedIndex1795900000700,
  ProjectedTerminations1795900000800,
  UsageVersions1795900000900,
  PartitionLedgerEvents1795900001000,
  HorizonDefinitions1795900001100,
  SharedQuotaWithdrawnIndex1795900001200,
  QueuedHeadsIndex1795900001300,
  SharedUsageSeries1795900001400,
  SecurePartitionFunctions1795900001700,
];
