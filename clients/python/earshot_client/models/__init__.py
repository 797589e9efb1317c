"""Contains all the data models used in inputs/outputs"""

from .action import Action
from .aggregation_clash import AggregationClash
from .attempt_request import AttemptRequest
from .attempt_response import AttemptResponse
from .attributes import Attributes
from .audience_kind import AudienceKind
from .audience_view import AudienceView
from .audience_view_source import AudienceViewSource
from .auth_failure import AuthFailure
from .auth_reason import AuthReason
from .authority_capability import AuthorityCapability
from .authority_owner import AuthorityOwner
from .authority_relation import AuthorityRelation
from .authorize_decision import AuthorizeDecision
from .authorize_request import AuthorizeRequest
from .authorize_response import AuthorizeResponse
from .basis import Basis
from .blocked_by import BlockedBy
from .bulk_check_request import BulkCheckRequest
from .bulk_check_response import BulkCheckResponse
from .capability_chain_consistency import CapabilityChainConsistency
from .capability_dependents_consistency import CapabilityDependentsConsistency
from .capability_page import CapabilityPage
from .capability_view import CapabilityView
from .chain_link import ChainLink
from .chain_response import ChainResponse
from .check_request import CheckRequest
from .check_response import CheckResponse
from .consent_event import ConsentEvent
from .consent_event_action import ConsentEventAction
from .consent_state import ConsentState
from .consistency_at_exact import ConsistencyAtExact
from .consistency_at_least import ConsistencyAtLeast
from .constraints import Constraints
from .constraints_view import ConstraintsView
from .container import Container
from .container_resolution import ContainerResolution
from .container_resolution_reason import ContainerResolutionReason
from .context_candidate import ContextCandidate
from .context_item import ContextItem
from .context_request import ContextRequest
from .data_reason import DataReason
from .decision import Decision
from .dependents_response import DependentsResponse
from .derive_request import DeriveRequest
from .device_page import DevicePage
from .device_view import DeviceView
from .disposition import Disposition
from .edge_page import EdgePage
from .edge_view import EdgeView
from .embedding_metric import EmbeddingMetric
from .error import Error
from .error_error import ErrorError
from .error_error_code import ErrorErrorCode
from .error_error_details import ErrorErrorDetails
from .expand_item_consistency import ExpandItemConsistency
from .expand_response import ExpandResponse
from .expand_response_historical import ExpandResponseHistorical
from .export_end import ExportEnd
from .export_end_earshot_export_end import ExportEndEarshotExportEnd
from .export_header import ExportHeader
from .export_header_earshot_export import ExportHeaderEarshotExport
from .export_record import ExportRecord
from .export_record_kind import ExportRecordKind
from .export_record_value import ExportRecordValue
from .get_item_consistency import GetItemConsistency
from .get_schema_consistency import GetSchemaConsistency
from .get_store_consistency import GetStoreConsistency
from .get_trust_consistency import GetTrustConsistency
from .grant_page import GrantPage
from .grant_view import GrantView
from .health import Health
from .historical_reason import HistoricalReason
from .historical_viewer_sets import HistoricalViewerSets
from .historical_viewer_subsets import HistoricalViewerSubsets
from .identity import Identity
from .identity_page import IdentityPage
from .identity_view import IdentityView
from .import_outcome import ImportOutcome
from .import_outcome_outcome import ImportOutcomeOutcome
from .item_page import ItemPage
from .item_summary import ItemSummary
from .item_view import ItemView
from .lifecycle_request import LifecycleRequest
from .list_capabilities_consistency import ListCapabilitiesConsistency
from .list_devices_consistency import ListDevicesConsistency
from .list_grants_consistency import ListGrantsConsistency
from .list_grants_status import ListGrantsStatus
from .list_identities_consistency import ListIdentitiesConsistency
from .list_items_consistency import ListItemsConsistency
from .list_participants_consistency import ListParticipantsConsistency
from .list_relations_consistency import ListRelationsConsistency
from .list_trust_consistency import ListTrustConsistency
from .list_trust_live import ListTrustLive
from .lookup_request import LookupRequest
from .lookup_response import LookupResponse
from .new_capability import NewCapability
from .new_consent import NewConsent
from .new_device import NewDevice
from .new_grant import NewGrant
from .new_identity import NewIdentity
from .new_item import NewItem
from .new_participant import NewParticipant
from .new_relation import NewRelation
from .new_store import NewStore
from .new_trust import NewTrust
from .object_ref import ObjectRef
from .object_ref_type import ObjectRefType
from .openapi_response_200 import OpenapiResponse200
from .origin_keyword import OriginKeyword
from .participant_kind import ParticipantKind
from .participant_page import ParticipantPage
from .participant_view import ParticipantView
from .partition_output import PartitionOutput
from .quality import Quality
from .ranking import Ranking
from .reach import Reach
from .reachable_request import ReachableRequest
from .reachable_response import ReachableResponse
from .reacher import Reacher
from .reachers_request import ReachersRequest
from .reachers_response import ReachersResponse
from .read_relationships_consistency import ReadRelationshipsConsistency
from .ready import Ready
from .ready_degraded import ReadyDegraded
from .ready_status import ReadyStatus
from .reason import Reason
from .replication import Replication
from .request_context import RequestContext
from .role import Role
from .schema_input import SchemaInput
from .schema_response import SchemaResponse
from .schema_response_conflicts_item import SchemaResponseConflictsItem
from .schema_response_relations_item import SchemaResponseRelationsItem
from .schema_response_relations_item_opens_item import SchemaResponseRelationsItemOpensItem
from .sealed_context import SealedContext
from .state import State
from .store_info import StoreInfo
from .store_page import StorePage
from .store_summary import StoreSummary
from .trust_page import TrustPage
from .trust_response import TrustResponse
from .trust_view import TrustView
from .tuple_ import Tuple
from .tuple_page import TuplePage
from .untrusted_source import UntrustedSource
from .viewer_audience import ViewerAudience
from .viewer_audience_source import ViewerAudienceSource
from .viewer_sets_consistency import ViewerSetsConsistency
from .viewer_sets_response import ViewerSetsResponse
from .viewer_subsets import ViewerSubsets
from .viewer_subsets_response import ViewerSubsetsResponse
from .viewer_subsets_source import ViewerSubsetsSource
from .viewers import Viewers
from .viewers_request import ViewersRequest
from .watch_change import WatchChange
from .watch_change_change import WatchChangeChange
from .watch_heartbeat import WatchHeartbeat
from .watch_heartbeat_heartbeat import WatchHeartbeatHeartbeat
from .write_outcome import WriteOutcome
from .write_outcome_outcome import WriteOutcomeOutcome
from .write_outcome_reason import WriteOutcomeReason

__all__ = (
    "Action",
    "AggregationClash",
    "AttemptRequest",
    "AttemptResponse",
    "Attributes",
    "AudienceKind",
    "AudienceView",
    "AudienceViewSource",
    "AuthFailure",
    "AuthorityCapability",
    "AuthorityOwner",
    "AuthorityRelation",
    "AuthorizeDecision",
    "AuthorizeRequest",
    "AuthorizeResponse",
    "AuthReason",
    "Basis",
    "BlockedBy",
    "BulkCheckRequest",
    "BulkCheckResponse",
    "CapabilityChainConsistency",
    "CapabilityDependentsConsistency",
    "CapabilityPage",
    "CapabilityView",
    "ChainLink",
    "ChainResponse",
    "CheckRequest",
    "CheckResponse",
    "ConsentEvent",
    "ConsentEventAction",
    "ConsentState",
    "ConsistencyAtExact",
    "ConsistencyAtLeast",
    "Constraints",
    "ConstraintsView",
    "Container",
    "ContainerResolution",
    "ContainerResolutionReason",
    "ContextCandidate",
    "ContextItem",
    "ContextRequest",
    "DataReason",
    "Decision",
    "DependentsResponse",
    "DeriveRequest",
    "DevicePage",
    "DeviceView",
    "Disposition",
    "EdgePage",
    "EdgeView",
    "EmbeddingMetric",
    "Error",
    "ErrorError",
    "ErrorErrorCode",
    "ErrorErrorDetails",
    "ExpandItemConsistency",
    "ExpandResponse",
    "ExpandResponseHistorical",
    "ExportEnd",
    "ExportEndEarshotExportEnd",
    "ExportHeader",
    "ExportHeaderEarshotExport",
    "ExportRecord",
    "ExportRecordKind",
    "ExportRecordValue",
    "GetItemConsistency",
    "GetSchemaConsistency",
    "GetStoreConsistency",
    "GetTrustConsistency",
    "GrantPage",
    "GrantView",
    "Health",
    "HistoricalReason",
    "HistoricalViewerSets",
    "HistoricalViewerSubsets",
    "Identity",
    "IdentityPage",
    "IdentityView",
    "ImportOutcome",
    "ImportOutcomeOutcome",
    "ItemPage",
    "ItemSummary",
    "ItemView",
    "LifecycleRequest",
    "ListCapabilitiesConsistency",
    "ListDevicesConsistency",
    "ListGrantsConsistency",
    "ListGrantsStatus",
    "ListIdentitiesConsistency",
    "ListItemsConsistency",
    "ListParticipantsConsistency",
    "ListRelationsConsistency",
    "ListTrustConsistency",
    "ListTrustLive",
    "LookupRequest",
    "LookupResponse",
    "NewCapability",
    "NewConsent",
    "NewDevice",
    "NewGrant",
    "NewIdentity",
    "NewItem",
    "NewParticipant",
    "NewRelation",
    "NewStore",
    "NewTrust",
    "ObjectRef",
    "ObjectRefType",
    "OpenapiResponse200",
    "OriginKeyword",
    "ParticipantKind",
    "ParticipantPage",
    "ParticipantView",
    "PartitionOutput",
    "Quality",
    "Ranking",
    "Reach",
    "ReachableRequest",
    "ReachableResponse",
    "Reacher",
    "ReachersRequest",
    "ReachersResponse",
    "ReadRelationshipsConsistency",
    "Ready",
    "ReadyDegraded",
    "ReadyStatus",
    "Reason",
    "Replication",
    "RequestContext",
    "Role",
    "SchemaInput",
    "SchemaResponse",
    "SchemaResponseConflictsItem",
    "SchemaResponseRelationsItem",
    "SchemaResponseRelationsItemOpensItem",
    "SealedContext",
    "State",
    "StoreInfo",
    "StorePage",
    "StoreSummary",
    "TrustPage",
    "TrustResponse",
    "TrustView",
    "Tuple",
    "TuplePage",
    "UntrustedSource",
    "ViewerAudience",
    "ViewerAudienceSource",
    "Viewers",
    "ViewerSetsConsistency",
    "ViewerSetsResponse",
    "ViewersRequest",
    "ViewerSubsets",
    "ViewerSubsetsResponse",
    "ViewerSubsetsSource",
    "WatchChange",
    "WatchChangeChange",
    "WatchHeartbeat",
    "WatchHeartbeatHeartbeat",
    "WriteOutcome",
    "WriteOutcomeOutcome",
    "WriteOutcomeReason",
)
